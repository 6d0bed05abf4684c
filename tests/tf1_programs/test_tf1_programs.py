"""TF1-style programs compared with what TensorFlow gave for the same programs
(programs.py: where they are, how they are compared, how the goldens are made).

The conformance programs of the API contract run on CPU here and with their
devices mapped to SIM in tests/runtime/test_conformance_on_sim.py; the programs
for the APIs beyond them (variable_scope / get_variable, tf.layers, tf.losses,
clipping and learning-rate schedules, RMSProp and Adagrad, RNNs, the extra ops)
run here, some of them also with their ops on a simulated accelerator (SIM:0),
feeds and fetches crossing to the client's CPU.
"""
import numpy as np
import pytest

import graphrt

from .programs import case_names, compare, golden, load_case, run_case


class _OnSim:
    """graphrt whose sessions have a SIM device that the unplaced ops run on."""

    def __getattr__(self, name):
        return getattr(graphrt, name)

    def Session(self, target="", graph=None, config=None):  # noqa: N802 - the TF name
        config = config or graphrt.ConfigProto(device_count={"CPU": 1, "SIM": 1})
        return graphrt.Session(target, graph, config)

    def Graph(self):  # noqa: N802 - the TF name
        g = graphrt.Graph()
        g._device_stack.append(graphrt.DeviceSpec.from_string("/device:SIM:0"))
        return g


@pytest.mark.parametrize("name", case_names("conformance"))
def test_conformance_program_matches_tensorflow(name):
    problems = compare(run_case("conformance", name, graphrt), golden("conformance", name))
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("name", case_names("programs"))
def test_program_matches_tensorflow(name):
    problems = compare(run_case("programs", name, graphrt), golden("programs", name))
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("name", ["layers_mlp_train", "layers_cnn_bn", "optimizer_slots", "losses_all"])
def test_program_on_sim_device(name):
    problems = compare(run_case("programs", name, _OnSim()), golden("programs", name))
    assert not problems, "\n".join(problems[:20])


def test_programs_train():
    """The training programs really train: the loss goes down under every optimizer."""
    out = load_case("programs", "layers_mlp_train").run(graphrt, np)
    for opt in ("sgd", "rmsprop", "rmsprop_c", "adagrad"):
        losses = out[opt]["losses"]
        assert losses[-1] < losses[0], (opt, losses)
        assert np.all(np.diff(losses[:4]) < 0), (opt, losses)
        assert out[opt]["names"]["trainable"] == ["embed/w0:0", "dense/kernel:0", "dense/bias:0",
                                                  "logits/kernel:0", "logits/bias:0"]
