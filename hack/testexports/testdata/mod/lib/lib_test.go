package lib

func use() {
	c := Config{TestSeam: true, High: 1, Tagged: true}
	c.Inspect()
	_ = c.String()
	_ = LevelHigh
	Choose(&Option{})
}

func useMore() { UsedByCommand() }
