"""The domain language, text in and text out: spoken sums and numbers, timer durations, clock questions, live
facts, sentence splitting, and structured results said in words. Nothing here imports the rest of the project."""
