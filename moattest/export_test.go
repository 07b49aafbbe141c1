package moattest

// ReplayInWork is replayInWork, for the external tests.
var ReplayInWork = replayInWork
