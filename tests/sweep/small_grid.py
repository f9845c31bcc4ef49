"""The small grid the sweep tests run: 402 networks, a few seconds on two cores."""

#: 400 two-layer networks (t = 2, widths 1..4) and three explicit ones: one token, softmax, a repeat
SMALL = """
description = "test grid"

[[architecture]]
widths = [3, 1]
ranks = [3]
tokens = 1

[[architecture]]
widths = [3, 2]
ranks = [2]
tokens = 3
normalized = true

[[architecture]]
widths = [2, 2, 2]
ranks = [1, 2]
tokens = 2

[product]
depth = 2
width = "1..4"
tokens = 2
"""
SMALL_SIZE = 402  # the third table is also in the product
