package transports_test

import (
	"testing"

	"github.com/herald-desktop/herald/backend/source"
	_ "github.com/herald-desktop/herald/backend/transports"
)

// TestOffersMatchCapabilities: what a driver promises surfaces
// (Driver.Offers) is what its sources implement, so a surface that
// offers by the driver never offers what the source cannot do.
func TestOffersMatchCapabilities(t *testing.T) {
	t.Parallel()
	for _, d := range source.Drivers() {
		t.Run(string(d.Kind), func(t *testing.T) {
			src, err := d.Open(source.Config{Name: "t", URL: d.DefaultURL}, source.Hooks{})
			if err != nil {
				t.Fatal(err)
			}
			_, follows := src.(source.SessionFollower)
			_, asks := src.(source.Asker)
			_, starts := src.(source.RunStarter)
			o := d.Offers
			for _, c := range []struct {
				what          string
				offered, impl bool
			}{
				{"lists sessions", o.ListsSessions, follows},
				{"starts runs", o.StartsRuns, starts},
				{"takes new prompts", o.AskNew, asks},
				{"takes prompts in followed sessions", o.AskFollowed, asks},
			} {
				if c.offered && !c.impl {
					t.Errorf("%s offers %q, its source does not implement it", d.Kind, c.what)
				}
			}
			if asks && !o.AskNew {
				t.Errorf("%s's source takes prompts, the driver does not offer them", d.Kind)
			}
			if follows != o.ListsSessions || starts != o.StartsRuns {
				t.Errorf("%s: offers %+v, source lists sessions %v, starts runs %v", d.Kind, o, follows, starts)
			}
			if d.Words.Conversation == "" || d.Words.Interrupted == "" {
				t.Errorf("%s has no words for its conversations: %+v", d.Kind, d.Words)
			}
		})
	}
}
