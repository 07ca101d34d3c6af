"""venus-edge: the live runtime of the Realtime-Venus full-duplex assistant (see the README's Layout section)."""
