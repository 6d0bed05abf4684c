"""Random graphs of elementwise ops for comparing executors (shared by the
compiled-schedule and segmented-schedule tests)."""
import contextlib

import numpy as np

import graphrt as tf


def random_graph(seed, devices=None):
    """A random graph of elementwise ops with many equal subexpressions (the
    same op on the same inputs, built twice), over arrays that kernels may
    overwrite when they own them; with `devices`, each op on one of them."""
    rng = np.random.RandomState(seed)
    place = np.random.RandomState(seed + 1000)
    with contextlib.ExitStack() as scope:
        return _random_graph(rng, lambda: scope.enter_context(tf.device(devices[place.randint(len(devices))]))
                             if devices else None)


def _random_graph(rng, next_device):
    x = tf.placeholder(tf.float32, [3], name="x")
    values = [x, tf.constant(np.float32(1.5)), tf.constant(np.float32(1.5)), x * 1.0]
    binary = [tf.add, tf.multiply, tf.subtract, tf.maximum]
    unary = [tf.nn.relu, tf.negative, tf.square, tf.identity]
    recipes = []
    for _ in range(40):
        next_device()
        if recipes and rng.rand() < 0.4:
            recipe = recipes[rng.randint(len(recipes))]  # build an equal node again
        elif rng.rand() < 0.3:
            recipe = ("unary", rng.randint(len(unary)), rng.randint(len(values)))
        elif rng.rand() < 0.15:
            recipe = ("add_n", tuple(rng.randint(len(values), size=rng.randint(2, 5))))
        else:
            recipe = ("binary", rng.randint(len(binary)), rng.randint(len(values)), rng.randint(len(values)))
        recipes.append(recipe)
        if recipe[0] == "unary":
            values.append(unary[recipe[1]](values[recipe[2]]))
        elif recipe[0] == "add_n":
            values.append(tf.add_n([values[i] * tf.constant(np.ones(3, np.float32)) for i in recipe[1]]))
        else:
            values.append(binary[recipe[1]](values[recipe[2]], values[recipe[3]]))
    fetched = [values[i] for i in sorted(set(rng.randint(4, len(values), size=8)))]
    return x, fetched
