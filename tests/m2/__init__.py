"""Tests of ag_attention._m2 (one test module per module)."""
