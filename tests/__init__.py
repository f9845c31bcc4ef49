"""The test suite: one test module per module of ag_attention (tests/test_layout.py checks the mirror)."""
