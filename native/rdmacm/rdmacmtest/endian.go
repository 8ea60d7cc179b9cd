package rdmacmtest

import "encoding/binary"

var nativeEndian = binary.NativeEndian
