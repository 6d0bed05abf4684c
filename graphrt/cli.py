"""The `graphrt` command.

    graphrt inspect GRAPH.pb|GRAPH.pbtxt|GRAPH.json --devices CPU:3 [--format text|dot|svg] [-o FILE]
    graphrt server --cluster cluster.json --job worker --task 0
"""
import argparse
import sys


def _inspect(args):
    from . import errors
    from .framework.graph_proto import read_graph_def
    from .partition import inspect
    import graphrt  # noqa: F401 - registers the ops the GraphDef names
    try:
        graph_def = read_graph_def(args.graph)
        view = inspect(graph_def, devices=args.devices, allow_soft_placement=args.allow_soft_placement)
        text = view.render(args.format)
    except (OSError, ValueError, RuntimeError, errors.OpError) as e:
        print(f"graphrt inspect: {e}", file=sys.stderr)
        return 2
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
        print(f"wrote {args.output}: {len(view.partitions)} partitions, {len(view.transfers)} transfers",
              file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _server(args):
    from .distributed.server_main import main as server_main
    if args.resolver:
        # The cluster and this task from the scheduler's environment (TF_CONFIG, or an srun step's SLURM_*).
        from .distribute import cluster_resolver
        try:
            if args.resolver == "tf_config":
                resolver = cluster_resolver.TFConfigClusterResolver()
            else:
                jobs = dict(_job_count(j) for j in args.slurm_jobs.split(",")) if args.slurm_jobs else None
                resolver = cluster_resolver.SlurmClusterResolver(jobs=jobs, port_base=args.port_base)
            args.cluster_spec = resolver.cluster_spec()
        except ValueError as e:
            print(f"graphrt server: {e}", file=sys.stderr)
            return 2
        args.job = args.job or resolver.task_type
        args.task = resolver.task_id if args.task is None else args.task
    missing = [f"--{n}" for n in ("job", "task") if getattr(args, n) is None]
    if not args.resolver and not args.cluster:
        missing.insert(0, "--cluster")
    if missing:
        print(f"graphrt server: {', '.join(missing)} required (or --resolver tf_config|slurm)", file=sys.stderr)
        return 2
    return server_main(args)


def _job_count(text):
    name, _, count = text.partition(":")
    if not count.isdigit():
        raise ValueError(f"--slurm-jobs entries are job:count, got {text!r}")
    return name, int(count)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="graphrt", description="graphrt command-line tools")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("inspect", help="place and partition an exported GraphDef and show the partitions")
    p.add_argument("graph", help="a GraphDef: TensorFlow's binary .pb or text .pbtxt (tf.train.write_graph), "
                   "or graphrt JSON")
    p.add_argument("--devices", default="CPU:1", help="device counts, e.g. CPU:3 or CPU:1,SIM:2")
    p.add_argument("--format", default="text", choices=("text", "dot", "svg"))
    p.add_argument("--allow-soft-placement", action="store_true")
    p.add_argument("-o", "--output", help="write to FILE instead of stdout")
    p.set_defaults(func=_inspect)
    s = sub.add_parser("server", help="run one task of a cluster in the foreground")
    s.add_argument("--cluster", help="cluster spec JSON file: {\"worker\": [\"127.0.0.1:2222\"]}")
    s.add_argument("--job")
    s.add_argument("--task", type=int)
    s.add_argument("--resolver", choices=("tf_config", "slurm"),
                   help="take the cluster, job and task from TF_CONFIG or the SLURM_* variables instead")
    s.add_argument("--slurm-jobs", help="with --resolver slurm: job:count,... in task order (default worker:all)")
    s.add_argument("--port-base", type=int, default=8888, help="with --resolver slurm: the first port on a node")
    s.add_argument("--device-count", default="CPU:1", help="local devices, e.g. CPU:2")
    s.add_argument("--curve-secret-key", help="this server's CURVE secret key file (enables CURVE)")
    s.add_argument("--curve-authorized", help="directory of client public keys allowed to connect")
    s.add_argument("--bind", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    s.add_argument("--max-message-bytes", type=int, help="largest message accepted (default 1 GiB)")
    s.set_defaults(func=_server)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
