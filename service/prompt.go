package service

import (
	"context"

	"github.com/herald-desktop/herald/backend/wire"
)

// AnswerText answers a clarify prompt with text, or a sudo or secret
// prompt with its password or value, from surface. key may be a short id.
// The value is wiped once sent (or refused) and never logged or stored;
// see approval.Inbox.AnswerText.
func (s *Service) AnswerText(ctx context.Context, key string, value *wire.Secret, surface string) error {
	defer value.Wipe()
	key, err := s.resolveKey(key)
	if err != nil {
		return err
	}
	return s.inbox.AnswerText(ctx, key, value, surface)
}
