package ui

// KnobRows draws a group of knobs (App.KnobFields) as rows of the grid it sits in: a
// label and a control each (its element has display: contents).
type KnobRows struct {
	A     *App
	Group string
}
