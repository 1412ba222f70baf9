"""A strict loopback fake of Gemini's native API (`generateContent`, `streamGenerateContent`):
it scripts model turns whose first function call carries a thought signature, as Gemini 3 issues
them, and refuses with Google's own 400 a request that does not send each one back as the
thought-signatures guide requires (ai.google.dev/gemini-api/docs/thought-signatures): within the
current turn (the model turns after the last user text), each step's first `functionCall` part
carries the signature it was issued with, verbatim; a signature this server never issued is
corrupted. Google's documented placeholder (for a call another model began) is taken for a call
this server did not sign; in place of a signature it issued, it is refused: stricter than Gemini
(which takes it anywhere, answering worse), so that a signature reactloop lost shows here. See
tests/helpers/strict_vendor.py for the other vendors' fakes.
"""

from __future__ import annotations

import base64
from typing import Any

import orjson
from attrs import define, field

from tests.helpers.strict_vendor import Step, StrictFake, Violation, sign
from tests.providers.render_gemini import gemini_json, gemini_stream
from tests.providers.wire_server import Reply, Request, json_reply

JsonObject = dict[str, Any]
PLACEHOLDER = base64.b64encode(b"context_engineering_is_the_way_to_go").decode()
"""Google's placeholder signature, as the wire carries it (a bytes field: base64)."""
USAGE: JsonObject = {"promptTokenCount": 12, "candidatesTokenCount": 7, "thoughtsTokenCount": 5}
MISSING = (
    "Function call is missing a thought_signature in functionCall parts. This is required for"
    " tools to work correctly, and missing thought_signature may lead to degraded model"
    " performance. Additional data, function call `default_api:{name}` , position {position}."
    " Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
)


def _signature_of(step: int, name: str, arguments: object) -> str:
    """The signature of a step's first call: made over its place in the turn and the call."""
    return sign(str(step), name, orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS).decode())


def _turn_start(contents: list[JsonObject]) -> int:
    """The index after the last user turn holding more than function responses."""
    for index in range(len(contents) - 1, -1, -1):
        turn = contents[index]
        if turn.get("role") == "user" and any("functionResponse" not in p for p in turn["parts"]):
            return index + 1
    return 0


@define
class StrictGemini(StrictFake):
    """The native Gemini API with Gemini 3's signature rules; see the module doc."""

    model: str = field(default="gemini-3-pro-preview", kw_only=True)
    issued: set[str] = field(factory=set, kw_only=True)
    streaming: bool = field(default=False, kw_only=True)

    def handle(self, request: Request) -> Reply:
        self.streaming = ":streamGenerateContent" in request.path
        return super().handle(request)

    def error(self, violation: Violation) -> Reply:
        detail = {"code": 400, "message": violation.message, "status": "INVALID_ARGUMENT"}
        return json_reply({"error": detail}, 400)

    def check(self, body: JsonObject) -> None:
        contents = body["contents"]
        for number, turn in enumerate(contents):
            for part in turn["parts"]:
                sent = part.get("thoughtSignature")
                if sent not in (None, PLACEHOLDER) and sent not in self.issued:
                    raise Violation(f"Corrupted thought signature (contents[{number}]).")
        start = _turn_start(contents)
        steps = [turn for turn in contents[start:] if turn.get("role") == "model"]
        for step, turn in enumerate(steps):
            self._check_step(step, turn, contents.index(turn))

    def _check_step(self, step: int, turn: JsonObject, position: int) -> None:
        calls = [part for part in turn["parts"] if "functionCall" in part]
        if not calls:
            return
        first = calls[0]
        call = first["functionCall"]
        sent = first.get("thoughtSignature")
        if sent is None:
            raise Violation(MISSING.format(name=call["name"], position=position + 1))
        wanted = _signature_of(step, call["name"], call.get("args", {}))
        if sent == PLACEHOLDER and wanted in self.issued:
            raise Violation(
                f"Thought signature replaced by the placeholder (contents[{position}])."
            )
        if sent not in (PLACEHOLDER, wanted):
            raise Violation(f"Corrupted thought signature (contents[{position}]).")

    def issue(self, step: int, scripted: Step, thoughts: bool) -> list[JsonObject]:
        """The parts of the next answer: a thought summary when asked for, the text, the calls;
        the first call signed (a text-only answer signs its text)."""
        parts: list[JsonObject] = []
        if thoughts and scripted.reasoning:
            parts.append({"text": scripted.reasoning, "thought": True})
        if scripted.text:
            parts.append({"text": scripted.text})
        for name, arguments in scripted.calls:
            parts.append({"functionCall": {"name": name, "args": arguments}})
        signed = next((p for p in parts if "functionCall" in p), parts[-1] if parts else None)
        if signed is not None:
            call = signed.get("functionCall")
            made = (
                _signature_of(step, call["name"], call["args"])
                if call is not None
                else sign("text", str(step), scripted.text)
            )
            signed["thoughtSignature"] = made
            self.issued.add(made)
        return parts

    def answer(self, body: JsonObject) -> Reply:
        contents = body["contents"]
        done = sum(turn.get("role") == "model" for turn in contents[_turn_start(contents) :])
        config = body.get("generationConfig", {}).get("thinkingConfig", {})
        parts = self.issue(done, self.step(done), config.get("includeThoughts") is True)
        if self.streaming:
            return self.stream(gemini_stream(parts, usage=USAGE))
        return json_reply({**gemini_json(parts, usage=USAGE), "modelVersion": self.model})
