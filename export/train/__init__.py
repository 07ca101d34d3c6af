"""A tiny Realtime-Venus trained on synthetic full-duplex sessions, so the bundle path can be measured.

`script` holds the fixed conversation content, `voices` the spoken clips,
`session` lays a session out on the chunk clock with what the model should
do in each chunk, `sequence` turns that into the token and media layout the
chunk loop prefills, `model` is the checkpoint's LLM and encoders in torch,
`loop` trains them, `cache` keys the result by the code and settings that
made it, `writer` stores it in the real checkpoint layout, and `bench`
measures the exported bundle through the runtime.
"""
