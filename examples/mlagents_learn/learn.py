"""``mlagents-learn`` 1.1.0 on a current torch: run this instead, with the same arguments.

torch >= 2.9's ``torch.onnx.export`` uses the dynamo exporter unless told otherwise, and
mlagents 1.1.0 does not tell it: training finishes, then the model export crashes. This script
makes ``dynamo=False`` the default and runs ``mlagents.trainers.learn.main`` unchanged, e.g.
``python examples/mlagents_learn/learn.py examples/mlagents_learn/ball_balance.yaml --run-id=bb``.
It reads no ZOOPORT_EXAMPLE_SHORT: it trains for as long as the YAML says.
"""

from __future__ import annotations

import functools

import torch.onnx
from mlagents.trainers.learn import main

torch.onnx.export = functools.partial(torch.onnx.export, dynamo=False)

if __name__ == "__main__":
    main()
