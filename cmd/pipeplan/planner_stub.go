package main

import "pipeplan/wasm/worker/share/sharetest"

// planner is the stub until core/request lands on main.
var planner = sharetest.StubPlanner
