// Package tsig parses TSIG keys (RFC 8945) as the Corefile and Secrets give
// them: the algorithm's name, a secret file (the base64 secret alone, or a
// BIND key file as tsig-keygen writes it), and the checks of a key (a
// domain name, a supported algorithm, a base64 secret of at least 16
// bytes). It is the one key parser of the plugin: the updates option
// (acmeupdate) and the parent option both use it.
//
// In: strings and files. Out: a Key, or an error saying what is wrong.
// Imports: miekg/dns only.
package tsig
