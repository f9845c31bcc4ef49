"""Tests of ag_attention._sweep (one test module per module)."""
