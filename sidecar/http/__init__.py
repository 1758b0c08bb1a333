"""The agent-facing HTTP API: routes, the edge's guards and error shape, metrics and the OpenAPI
document. Routes stay thin: they parse, call a service, and answer.
"""
