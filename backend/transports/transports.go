// Package transports registers every transport Herald is built with.
// Importing it (service does) makes their drivers known to
// backend/source; nothing else names a transport package above backend/.
//
// A new transport is a package under backend/ that implements
// source.Source and registers a source.Driver in its init function, a
// fake server beside it for tests, and one import line here.
package transports

import (
	_ "github.com/herald-desktop/herald/backend/apiserver" // the API server (/v1 runs, SSE)
	_ "github.com/herald-desktop/herald/backend/bridge"    // the Herald bridge (a plugin route on the dashboard)
	_ "github.com/herald-desktop/herald/backend/gateway"   // the dashboard gateway (/api/ws JSON-RPC)
)
