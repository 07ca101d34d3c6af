"""The harness: delegated work that never blocks the conversation and is never lost.

Intake (spans, store) -> capture (evidence) -> dispatch (router, capabilities,
runner) -> return (polish, delivery gate). `core.Harness` ties them together;
`edge.nodes.harness` puts it on the bus.
"""
