package agent

import "context"

// Continue gives the model another MaxTurns replies on the question it ran
// out of turns on (Ask returned ErrTurnCap): the tool calls of its last
// reply, left unrun at the cap, are run first, so the conversation goes on
// exactly where it stopped. Failure and cancellation are handled as in
// Ask: what Continue added is taken out again, what came before stays.
// Its replies count on in the question's figures and events.
func (s *Session) Continue(ctx context.Context) (string, error) {
	return s.question(func() (string, error) { return s.resume(ctx) })
}

func (s *Session) resume(ctx context.Context) (string, error) {
	if last := s.history[len(s.history)-1]; last.Role == "assistant" {
		for _, c := range last.ToolCalls {
			if err := ctx.Err(); err != nil {
				return "", err
			}
			s.add(s.run(ctx, s.turn, c))
		}
	}
	return s.turns(ctx)
}

// MaxTurns is the number of model replies a question (or a Continue) may
// take.
func (s *Session) MaxTurns() int { return s.cfg.MaxTurns }
