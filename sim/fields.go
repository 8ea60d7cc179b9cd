package sim

import (
	"errors"
	"fmt"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/smp"
)

// Fields of the mad/smp and mad/perf layouts the simulator reads or patches
// in raw attribute buffers. They are looked up by name once; offsets live
// only in those layouts. If a layout lacks one, layoutErr says which and
// New fails.
var (
	niPortGUID     mad.Field
	niLocalPortNum mad.Field
	piLocalPortNum mad.Field
	piMKey         mad.Field // zeroed in PortInfoRecords without an SM_Key

	// PortInfo fields the SM's configuration writes.
	piLID, piLMC, piMasterSMLID, piGIDPrefix, piPortState mad.Field
	piPortPhysicalState, piHOQLife, piCapabilityMask      mad.Field
	piCapabilityMask2                                     mad.Field
	ndNodeString                                          mad.Field

	pcPortSelect, pcCounterSelect, pcCounterSelect2    mad.Field
	pcePortSelect, pceCounterSelect, pceCounterSelect2 mad.Field

	// pcFields[i] is counter i of a port's PortCounters; pceFields[i]
	// counter i of its PortCountersExtended (see counters.go).
	pcFields  [numPC]mad.Field
	pceFields [numPCE]mad.Field
	// pcxFields[i] is counter i's additional PortCountersExtended field
	// (Width 0: none, the data and packet counters).
	pcxFields [numPC]mad.Field

	layoutErr error
)

func init() {
	var errs []error
	get := func(l *mad.Layout, name string) mad.Field {
		f, ok := l.Field(name)
		if !ok {
			errs = append(errs, fmt.Errorf("sim: layout %s has no field %s", l.Name, name))
		}
		return f
	}
	niPortGUID = get(smp.NodeInfoLayout(), "PortGUID")
	niLocalPortNum = get(smp.NodeInfoLayout(), "LocalPortNum")
	piLocalPortNum = get(smp.PortInfoLayout(), "LocalPortNum")
	piMKey = get(smp.PortInfoLayout(), "M_Key")
	piLID = get(smp.PortInfoLayout(), "LID")
	piLMC = get(smp.PortInfoLayout(), "LMC")
	piMasterSMLID = get(smp.PortInfoLayout(), "MasterSMLID")
	piGIDPrefix = get(smp.PortInfoLayout(), "GidPrefix")
	piPortState = get(smp.PortInfoLayout(), "PortState")
	piPortPhysicalState = get(smp.PortInfoLayout(), "PortPhysicalState")
	piHOQLife = get(smp.PortInfoLayout(), "HOQLife")
	piCapabilityMask = get(smp.PortInfoLayout(), "CapabilityMask")
	piCapabilityMask2 = get(smp.PortInfoLayout(), "CapabilityMask2")
	ndNodeString = get(smp.NodeDescriptionLayout(), "NodeString")

	pcPortSelect = get(perf.PortCountersLayout(), "PortSelect")
	pcCounterSelect = get(perf.PortCountersLayout(), "CounterSelect")
	pcCounterSelect2 = get(perf.PortCountersLayout(), "CounterSelect2")
	pcePortSelect = get(perf.PortCountersExtendedLayout(), "PortSelect")
	pceCounterSelect = get(perf.PortCountersExtendedLayout(), "CounterSelect")
	pceCounterSelect2 = get(perf.PortCountersExtendedLayout(), "CounterSelect2")
	for i, name := range pcNames {
		pcFields[i] = get(perf.PortCountersLayout(), name)
	}
	for i := range pcFields {
		pcMax[i] = uint32(min(pcFields[i].Max(), 0xffffffff))
	}
	for i, name := range pceNames {
		pceFields[i] = get(perf.PortCountersExtendedLayout(), name)
	}
	for i, name := range pcNames {
		if i < pcXmitData || i > pcRcvPkts { // the data and packet counters are pceFields
			pcxFields[i] = get(perf.PortCountersExtendedLayout(), name)
		}
	}
	layoutErr = joinErr(layoutErr, errs)
}

func joinErr(err error, errs []error) error {
	return errors.Join(append([]error{err}, errs...)...)
}
