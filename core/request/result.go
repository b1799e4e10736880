package request

func ptr(i int) *int { return &i }
