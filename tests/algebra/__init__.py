"""Tests of ag_attention._algebra (one test module per module)."""
