"""Tests of ag_attention._reproduce.theorem34 (one test module per module)."""
