"""Routing: the general-only mode, scripted rules, and the model router under a JSON-schema grammar."""
from __future__ import annotations

import json

import jsonschema
import pytest

from edge.harness.capability import CapabilityError, Registry
from edge.harness.router import GeneralOnlyRouter, ModelRouter, Recent, ScriptedRouter, choice_schema, grammar_schema
from harness_helpers import ScriptedCapability

CONVERT = ScriptedCapability("convert", schema={
    "type": "object", "additionalProperties": False, "required": ["value", "unit"],
    "properties": {"value": {"type": "number"}, "unit": {"enum": ["km", "mi"]}}})
CONVERT.description = "Converts a distance between kilometers (km) and miles (mi)."


def registry(*caps) -> Registry:
    reg = Registry()
    for c in caps:
        reg.add(c)
    return reg


def test_general_only_mode_needs_no_model():
    reg = registry(ScriptedCapability("general"))
    assert GeneralOnlyRouter().route("hi there", reg, []).arguments == {"request": "hi there"}
    with pytest.raises(CapabilityError, match="no general capability"):
        GeneralOnlyRouter().route("hi", registry(CONVERT), [])


def test_scripted_rules_fill_groups():
    r = ScriptedRouter([{"match": r"in (\w+)$", "capability": "weather", "arguments": {"city": "{1}"}}], None)
    assert r.route("weather in Paris", registry(), []).arguments == {"city": "Paris"}
    with pytest.raises(CapabilityError, match="no capability fits"):
        r.route("something else", registry(), [])


def test_grammar_schema_drops_what_the_grammar_cannot_unroll_but_validation_keeps_it():
    reg = registry(ScriptedCapability("general", schema={"type": "object", "properties": {
        "request": {"type": "string", "minLength": 1, "maxLength": 4000, "pattern": ".+"}}}))
    schema = choice_schema(reg, [Recent("w1", "weather?", "sunny")])
    arg = schema["anyOf"][0]["properties"]["arguments"]["properties"]["request"]
    assert arg == {"type": "string"}
    assert schema["anyOf"][0]["properties"]["continuation_of"]["enum"] == ["", "w1"]
    assert grammar_schema({"additionalProperties": {"type": "string", "format": "email"}}) == {
        "additionalProperties": {"type": "string"}}


class FakeLlm:
    """Checks what the router sends; answers like a model would under the grammar."""

    def __init__(self, reply: str) -> None:
        self.reply, self.calls = reply, []

    def create_chat_completion(self, **kw):
        self.calls.append(kw)
        return {"choices": [{"message": {"content": self.reply}}]}


def test_model_router_sends_a_grammar_and_reads_the_choice():
    llm = FakeLlm(json.dumps({"capability": "convert", "arguments": {"value": 3, "unit": "mi"},
                              "continuation_of": "w1"}))
    choice = ModelRouter(llm).route("and 3 miles?", registry(CONVERT), [Recent("w1", "10 km in miles", "6.2")])
    assert (choice.capability, choice.arguments, choice.continuation_of) == ("convert", {"value": 3, "unit": "mi"},
                                                                            "w1")
    sent = llm.calls[0]
    assert sent["grammar"] is not None and sent["temperature"] == 0.0
    assert "convert" in sent["messages"][0]["content"] and "w1" in sent["messages"][0]["content"]
    with pytest.raises(CapabilityError, match="which tool"):
        ModelRouter(FakeLlm("not json")).route("x", registry(CONVERT), [])


@pytest.mark.slow
def test_the_embedded_model_routes_under_the_grammar():
    from edge.backends.locate import QWEN_GGUF, ModelMissing, assemble
    try:
        path = assemble(QWEN_GGUF)
    except ModelMissing as exc:
        pytest.skip(str(exc))
    reg = registry(ScriptedCapability("general", schema={"type": "object", "properties": {
        "request": {"type": "string", "maxLength": 4000}}, "required": ["request"]}), CONVERT)
    router = ModelRouter.from_gguf(str(path), n_ctx=1024, threads=1)
    choice = router.route("Convert 10 kilometers to miles.", reg, [])
    reg.validate(choice.capability, choice.arguments)  # the grammar's output fits the capability's schema
    jsonschema.validate({"capability": choice.capability, "arguments": choice.arguments,
                         "continuation_of": choice.continuation_of}, choice_schema(reg, []))
    assert choice.capability == "convert" and choice.arguments == {"value": 10, "unit": "km"}
