package apiserver

// SetTurnControl sets what the connection learned of session turns, as an
// earlier turn would have.
func SetTurnControl(c *Client, tc TurnControl) { c.setTurnControl(tc) }

// DecodeHistory is decodeHistory.
var DecodeHistory = decodeHistory
