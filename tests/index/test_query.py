import pytest

from sidecar.errors import BadRequest
from sidecar.index.query import MAX_QUERY_TERMS, build_match, check_query, terms


def test_every_token_is_quoted_and_or_ed() -> None:
    assert build_match('deploy NEAR(x "prod') == '"deploy" OR "near(x" OR """prod"'


def test_stopwords_drop_only_when_other_words_remain() -> None:
    assert terms("what is the deploy rule") == ["deploy", "rule"]
    assert terms("the and") == ["the", "and"]


def test_tokens_without_word_characters_are_dropped() -> None:
    assert build_match("* : () 🙂") is None


def test_terms_are_capped_and_deduplicated() -> None:
    assert terms("a1 A1 a1") == ["a1"]
    assert len(terms(" ".join(f"w{i}" for i in range(500)))) == MAX_QUERY_TERMS


@pytest.mark.parametrize("bad", ["", "   ", "a\x00b", None, 3, ["q"]])
def test_bad_queries_are_400(bad: object) -> None:
    with pytest.raises(BadRequest):
        check_query(bad)
