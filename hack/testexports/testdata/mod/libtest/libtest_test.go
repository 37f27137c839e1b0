package libtest

func use() { Fake() }
