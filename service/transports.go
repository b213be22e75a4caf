package service

// The transports Herald is built with: each registers its driver with
// backend/source when imported. A new transport is one more line in
// backend/transports; nothing else in service names it.
import _ "github.com/herald-desktop/herald/backend/transports"
