package fixture

func use() {
	g := Gateway{Fall: true}
	_ = g
	OnlyOwnTests()
	_ = writer{}.WriteMsg()
}
