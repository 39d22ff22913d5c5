package browser

import "github.com/spoolgate/spoolgate/spool/config"

// readSpecOf is how the site's answer is read and known to have ended:
// its keys done, copy, errorTurn, chrome, network and read.
func readSpecOf(site config.SiteConfig) readSpec {
	rs := readSpec{done: site.Done, copy: site.Copy, errorTurn: site.ErrorTurn, chrome: site.Chrome, strict: site.Verify == config.VerifyStrict, noCheck: site.Verify == config.VerifyOff}
	if site.Network != nil {
		n := *site.Network
		rs.network = &n
	}
	rs.methods = orderMethods(site.Read, rs.network != nil, rs.copy != "")
	return rs
}
