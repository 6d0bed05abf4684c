"""`tf.saved_model.main_op`: the init op a SavedModel runs once its variables are restored."""
from ..framework.graph import GraphKeys, get_default_graph
from ..ops import control_ops
from ..ops import variables as variables_lib


def main_op():
    """Initializes the global and local variables and every table."""
    tables = get_default_graph().get_collection(GraphKeys.TABLE_INITIALIZERS)
    init_tables = control_ops.group(*tables, name="init_all_tables") if tables else \
        control_ops.no_op(name="init_all_tables")
    return control_ops.group(variables_lib.global_variables_initializer(),
                             variables_lib.local_variables_initializer(), init_tables)


def main_op_with_restore(restore_op_name):
    """`main_op()`, then the op named `restore_op_name` (TF passes the name itself to `group`,
    which refuses a string; the op is looked up here)."""
    graph = get_default_graph()
    with graph.control_dependencies([main_op()]):
        return control_ops.group(graph.as_graph_element(restore_op_name))
