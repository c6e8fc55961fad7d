"""One module per chapter demo: pure callback functions (tested in tests/) and a ``make_demo()`` builder."""
