"""Entity names: the key two spellings of one entity share, known aliases, and a coarse type.

The key is the name case-folded, accents and punctuation dropped, a leading article and a trailing
version number taken off ("PostgreSQL 16" and "postgresql" share ``postgresql``). Aliases map a
key to another ("postgres", "pg" -> ``postgresql``); the graph also learns aliases ("Postgres
(pg)", "pg aka Postgres") and, with an embedder, from close name vectors.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["ALIASES", "TYPES", "entity_key", "entity_type", "split_version"]

_ARTICLE = re.compile(r"^(?:the|a|an|our|my)\s+")
_VERSION = re.compile(r"\s+v?\d+(?:\.\d+)*[a-z]?$")
_PUNCT = re.compile(r"[^\w\s+#-]")
_SPACE = re.compile(r"\s+")

#: Spellings of one thing (key -> canonical key), for the names memory notes use most.
ALIASES: dict[str, str] = {
    "postgres": "postgresql",
    "pg": "postgresql",
    "psql": "postgresql",
    "pgsql": "postgresql",
    "cockroach": "cockroachdb",
    "crdb": "cockroachdb",
    "k8s": "kubernetes",
    "kube": "kubernetes",
    "js": "javascript",
    "ts": "typescript",
    "py": "python",
    "mongo": "mongodb",
    "es": "elasticsearch",
    "gcp": "google cloud",
    "aws": "amazon web services",
    "gh": "github",
}

#: A coarse type for well-known names: ``uses`` holds one value per subject and type.
TYPES: dict[str, str] = {
    **dict.fromkeys(
        ["postgresql", "cockroachdb", "mysql", "mariadb", "sqlite", "mongodb", "dynamodb", "cassandra",
         "oracle", "sql server", "spanner", "clickhouse", "duckdb"],
        "database",
    ),
    **dict.fromkeys(["redis", "memcached", "valkey"], "cache"),
    **dict.fromkeys(["kafka", "rabbitmq", "nats", "sqs", "pulsar"], "queue"),
    **dict.fromkeys(["kubernetes", "nomad", "ecs", "docker swarm"], "orchestrator"),
    **dict.fromkeys(["amazon web services", "google cloud", "azure", "hetzner", "digitalocean"], "cloud"),
    **dict.fromkeys(["github", "gitlab", "bitbucket"], "forge"),
    **dict.fromkeys(["jenkins", "github actions", "circleci", "buildkite"], "ci"),
    **dict.fromkeys(["grafana", "datadog", "prometheus", "new relic"], "monitoring"),
    **dict.fromkeys(["elasticsearch", "opensearch", "meilisearch"], "search"),
}  # fmt: skip


def split_version(name: str) -> tuple[str, str]:
    """``("PostgreSQL", "16")`` for "PostgreSQL 16"; the name unchanged and "" when it ends in no
    version. A number is a version after a known product's name or when it has a dot ("Python
    3.11"); "Sprint 43" and "Sprint 44" stay two things."""
    found = _VERSION.search(name.strip())
    if found is None or found.start() == 0:
        return name.strip(), ""
    base, version = name.strip()[: found.start()], found.group().strip()
    known = _fold(base) in TYPES or _fold(base) in ALIASES
    return (base, version) if known or "." in version else (name.strip(), "")


def _fold(name: str) -> str:
    folded = name.casefold()
    if not folded.isascii():  # ASCII has no compatibility forms or marks to drop
        folded = unicodedata.normalize("NFKD", folded)
        folded = "".join(c for c in folded if not unicodedata.combining(c))
    return _ARTICLE.sub("", _SPACE.sub(" ", _PUNCT.sub(" ", folded)).strip())


def entity_key(name: str) -> str:
    """The key an entity is found by: folded, unaccented, no punctuation, article or version, aliases applied."""
    base, _ = split_version(_ARTICLE.sub("", name.strip().casefold()))
    key = _fold(base) or _fold(name)
    return ALIASES.get(key, key)


def entity_type(key: str) -> str:
    """The known type of an entity key, or ``thing``."""
    return TYPES.get(key, "thing")
