"""Tests of ag_attention._numeric (one test module per module)."""
