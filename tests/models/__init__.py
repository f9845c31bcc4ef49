"""Tests of ag_attention._models (one test module per module)."""
