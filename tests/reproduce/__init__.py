"""Tests of ag_attention._reproduce (one test module per module)."""
