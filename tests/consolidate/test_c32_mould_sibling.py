"""A later line that swaps every name of an older line, two names or more said apart, is the older
line's mould said of another subject, not its value given anew: the older line still recurs. One
name kept, or a single name (of one word or several side by side), is read as before."""

from __future__ import annotations

from sidecar.consolidate.reworded import restates, statement

OLD = "Ferry pickups from Portree are handled by Eilidh, logged in the harbour book."


def _restates(new: str, old: str = OLD) -> bool:
    return restates(statement(new), statement(old))


def test_every_name_swapped_is_the_mould_of_another_subject() -> None:
    assert not _restates("Ferry pickups from Uig harbour are handled by Somhairle, logged in the harbour book.")


def test_the_subjects_name_kept_with_another_holder_is_a_value_given_anew() -> None:
    assert _restates("Ferry pickups from Portree are handled by Somhairle, logged in the harbour book.")


def test_one_name_of_several_words_given_anew_is_still_read() -> None:
    old = "The boat fuel account is with Highland Marine Supplies."
    assert _restates("Since June the boat fuel account is with Caledonian Chandlers.", old)


def test_a_number_changed_with_the_names_still_restates() -> None:
    old = "Ferry pickups from Portree are handled by Eilidh at 07:40, logged in the harbour book."
    new = "Ferry pickups from Uig are handled by Somhairle at 08:15, logged in the harbour book."
    assert _restates(new, old)
