package agent

import (
	"context"
	"errors"
)

// Continue gives the model another MaxTurns replies on the question it ran
// out of turns on (Ask returned ErrTurnCap): the tool calls of its last
// reply, left unrun at the cap, are run first, so the conversation goes on
// exactly where it stopped. Failure and cancellation are handled as in
// Ask: what Continue added is taken out again, what came before stays.
func (s *Session) Continue(ctx context.Context) (string, error) {
	mark := len(s.history)
	s.proposed, s.written = 0, 0
	answer, err := s.resume(ctx)
	if err != nil && !errors.Is(err, ErrTurnCap) {
		s.history = s.history[:mark]
	}
	return answer, err
}

func (s *Session) resume(ctx context.Context) (string, error) {
	if last := s.history[len(s.history)-1]; last.Role == "assistant" {
		for _, c := range last.ToolCalls {
			if err := ctx.Err(); err != nil {
				return "", err
			}
			s.add(s.run(ctx, c))
		}
	}
	return s.turns(ctx)
}

// MaxTurns is the number of model replies a question (or a Continue) may
// take.
func (s *Session) MaxTurns() int { return s.cfg.MaxTurns }
