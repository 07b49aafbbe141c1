package agent

// Resume puts an earlier conversation back after the system prompt, as if
// its questions had been asked in this session: msgs is a history without
// its system prompt (a saved session's). Whatever was asked so far is
// replaced. The transcript gets nothing: those messages were exchanged
// before, and written then.
func (s *Session) Resume(msgs []Message) {
	s.history = append(s.history[:1:1], msgs...)
	s.proposed, s.written = 0, 0
}

// Conversation is the history without the system prompt: what a saved
// session keeps (each run builds its own system prompt from its flags).
func (s *Session) Conversation() []Message {
	return append([]Message(nil), s.history[1:]...)
}
