package app

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/apiservertest"
	"github.com/herald-desktop/herald/backend/hermestest"
)

// TestFollowRunStartedElsewhere: a run started with POST /v1/runs by
// another program (curl, a script) is invisible until the window's
// "Follow run ID" follows it; then its approval shows and is answered.
// A dashboard gateway, a blank id or one that is no id are refused with
// a line saying what to do; a run followed is returned by its one name.
func TestFollowRunStartedElsewhere(t *testing.T) {
	a, p, _, _ := emptyDesktop(t)
	api := apiservertest.NewServer(apiservertest.Options{})
	defer api.Close()
	if err := a.AddGateway(AddGatewayRequest{Name: "runs", Kind: "api", URL: api.URL, Auth: "key", Secret: api.Key()}); err != nil {
		t.Fatal(err)
	}
	dash := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer dash.Close()
	if err := a.AddGateway(AddGatewayRequest{Name: "lab", URL: dash.URL, Auth: "token", Secret: dash.Token()}); err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, "the API server connected", func(f *fakePlatform) bool {
		g, ok := gatewayIn(f.last, "runs")
		return ok && g.State == "connected"
	})
	// Started elsewhere: a plain HTTP client, not Herald.
	body, _ := json.Marshal(map[string]string{"input": "approve-me: rm -rf ./dist"})
	req, _ := http.NewRequest("POST", api.URL+"/v1/runs", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+api.Key())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var run struct {
		RunID string `json:"run_id"`
	}
	json.NewDecoder(resp.Body).Decode(&run)
	resp.Body.Close()
	if run.RunID == "" {
		t.Fatalf("POST /v1/runs: %s, no run_id", resp.Status)
	}
	for _, tc := range []struct{ gw, id, say string }{
		{"runs", "  ", "give the run's id"},
		{"runs", "run 1", "does not know run 1: check the id"}, // the form Herald once showed runs in, for a run nobody started
		{"runs", "run_a b", "not a run id"},
		{"nope", run.RunID, "no gateway named"},
		{"lab", run.RunID, "lab lists its sessions by itself: follow them in Sessions"},
	} {
		if _, err := a.FollowRun(tc.gw, tc.id); err == nil || !strings.Contains(err.Error(), tc.say) {
			t.Errorf("FollowRun(%q, %q) = %v, want it to say %q", tc.gw, tc.id, err, tc.say)
		}
	}
	ref, err := a.FollowRun("runs", " "+run.RunID+" ")
	if err != nil {
		t.Fatal(err)
	}
	// The window says which run it follows by the run's one name, as
	// every surface names it, and keeps the whole id for the details.
	if want := a.Service().SessionName("runs", run.RunID, ""); ref.ID != run.RunID || ref.Name != want || ref.Name == "" || strings.Contains(ref.Name, strings.TrimPrefix(run.RunID, "run_")[:8]) {
		t.Errorf("FollowRun returned %+v, want id %s named %q", ref, run.RunID, want)
	}
	p.waitFor(t, "the followed run's approval", func(f *fakePlatform) bool {
		return len(f.last.Approvals) == 1 && strings.Contains(f.last.Approvals[0].Command, "rm -rf ./dist")
	})
}
