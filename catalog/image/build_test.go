package image

import (
	"encoding/pem"
	"time"
)

var timeZero = time.Unix(1, 0)

func pemOf(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
