"""Tests of ag_attention._exact (one test module per module)."""
