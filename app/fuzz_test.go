package app

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

var settingsSeeds = []string{
	``,
	`{}`,
	`null`,
	`[]`,
	`{broken`,
	`{"gateways":null}`,
	`{"gateways":[]}`,
	`{"gateways":[null]}`,
	`{"gateways":[{"name":"lab","url":"https://lab:9119","kind":"ws","auth":"password","username":"me"},{"name":"home","url":"http://127.0.0.1:9119","kind":"ws","auth":"token","sessions":["20261202_100136_258fb5"]}],"close_to_tray":false,"pause_notifications":true,"approval_timeout_seconds":60}`,
	`{"gateways":[{"name":"b"},{"name":"a"},{"name":"b","url":"x"}]}`,
	`{"gateways":[{"sessions":[]}]}`,
	`{"GATEWAYS":[{"NAME":"x"}],"Close_To_Tray":false}`,
	`{"approval_timeout_seconds":1e3}`,
	`{"approval_timeout_seconds":-1}`,
	`{"approval_timeout_seconds":99999999999999999999}`,
	`{"close_to_tray":"yes"}`,
	"{\"gateways\":[{\"name\":\"\xff\\ud800\"}]}",
	`{"a":1,"a":2}`,
	"\xef\xbb\xbf{}",
}

// FuzzSettingsLoad: whatever bytes sit in settings.json, Load does not
// panic and returns an error or settings; whatever it returned, Save then
// Load gives back (up to Save's documented sort by gateway name and JSON's
// omitempty turning empty lists into absent ones).
func FuzzSettingsLoad(f *testing.F) {
	for _, s := range settingsSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o600); err != nil {
			t.Fatal(err)
		}
		st, err := NewSettingsStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.Load()
		if err != nil {
			if !reflect.DeepEqual(got, DefaultSettings()) {
				t.Fatalf("failed Load returned %+v, want the defaults", got)
			}
			return
		}
		want := normalize(got)
		if err := st.Save(got); err != nil {
			t.Fatalf("Save of loaded settings %+v: %v", got, err)
		}
		again, err := st.Load()
		if err != nil {
			t.Fatalf("Load after Save: %v", err)
		}
		if !reflect.DeepEqual(normalize(again), want) {
			t.Fatalf("round trip changed settings:\n got %+v\nwant %+v", again, want)
		}
	})
}

// normalize copies st the way Save stores it: gateways stably sorted by
// name, empty lists as nil.
func normalize(st Settings) Settings {
	out := st
	out.Gateways = nil
	if len(st.Gateways) > 0 { // Save writes an empty list as []; Load of null gives nil
		out.Gateways = make([]GatewaySettings, len(st.Gateways))
		copy(out.Gateways, st.Gateways)
		for i := range out.Gateways {
			if len(out.Gateways[i].Sessions) == 0 {
				out.Gateways[i].Sessions = nil
			} else {
				out.Gateways[i].Sessions = slices.Clone(out.Gateways[i].Sessions)
			}
		}
		slices.SortStableFunc(out.Gateways, func(a, b GatewaySettings) int {
			switch {
			case a.Name < b.Name:
				return -1
			case a.Name > b.Name:
				return 1
			}
			return 0
		})
	}
	return out
}
