"""What the rules read: each evasion undone, legitimate text left readable, time linear."""

from __future__ import annotations

import pytest

from sidecar.scanner.normalise import fold_char, normalise


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("ig\u034fnore", "ignore"),  # combining grapheme joiner
        ("ignore\u3164all", "ignore all"),  # Hangul filler as a space
        ("ignore\uffa0all\u1160x", "ignore all x"),
        ("\u0456gn\u043er\u0435", "ignore"),  # Cyrillic look-alikes
        ("\u0399\u03b7\u03bf", "ino"),  # Greek capital iota, eta, omicron
        ("I**gnore** a*l*l", "ignore all"),
        ("~~dis~~regard and ig`nore`", "disregard and ignore`"),
        ("Ig<b>no</b>re", "ignore"),
        ("Ig-\nnore and in-\n  structions", "ignore and instructions"),
        ("&#73;gnore &#x69;t &amp;#73;", "ignore it i"),
        ("%69%67%6e%6f%72%65", "ignore"),
        ("ＩＧＮＯＲＥ　ｔｈｅ", "ignore the"),
        ("\u3010SYSTEM\u3011 \uff3bx\uff3d \u2039|im_start|\u203a", "[system] [x] <|im_start|>"),
        ("\u201cquoted\u201d \u2018single\u2019", "\"quoted\" 'single'"),
        ("ïgnörë", "ignore"),
        ("a\u200bb\u2060c\ufeffd\u00ade", "abcde"),
    ],
)
def test_evasions_are_undone(text: str, folded: str) -> None:
    assert normalise(text).folded == folded


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("**Bold** heading and * bullet", "bold heading and * bullet"),
        ("snake_case and __init__ stay", "snake_case and init stay"),
        ("2*3 = 6 and ~/.ssh/config", "23 = 6 and ~/.ssh/config"),
        ("state-of-the-art and a - b", "state-of-the-art and a - b"),
        ("~~~python\ncode\n~~~", "~~~python\ncode\n~~~"),
        ("Café — naïve", "cafe - naive"),
    ],
)
def test_ordinary_markdown_keeps_its_words_and_lines(text: str, folded: str) -> None:
    assert normalise(text).folded == folded


def test_cased_view_keeps_case_for_decoding() -> None:
    views = normalise("Blob aGVsbG8= &#73;")
    assert views.cased == "Blob aGVsbG8= I"
    assert views.folded == "blob agvsbg8= i"


def test_fold_char_drops_marks_and_format_characters_and_keeps_other_scripts() -> None:
    assert fold_char("\u0301") == ""
    assert fold_char("\u200d") == ""
    assert fold_char("\u3164") == " "
    assert fold_char("\u2028") == "\n"
    assert fold_char("\u05e9") == "\u05e9"
    assert fold_char("\u4e2d") == "\u4e2d"


def test_fences_are_found_in_the_folded_text() -> None:
    views = normalise("a\n```\ncode\n```\nb\n~~~\nopen")
    text = views.folded
    assert not views.in_fence(text.index("a"))
    assert views.in_fence(text.index("code"))
    assert not views.in_fence(text.index("b"))
    assert views.in_fence(text.index("open"))
