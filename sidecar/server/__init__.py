"""The running sidecar: the app factory (``create_app``), the tiers' lifecycle and ``serve``.

The top of the import order: it wires every other package together and nothing imports it.
"""
