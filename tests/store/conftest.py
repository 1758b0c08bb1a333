from tests.support.pg import pg_server

__all__ = ["pg_server"]
