package election

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// LockKind is the kind of object a client-go candidate locks.
type LockKind string

const (
	LockLease     LockKind = "Lease"
	LockConfigMap LockKind = "ConfigMap"
	LockEndpoints LockKind = "Endpoints"
)

// AnnotationLock is client-go's ConfigMapLock or EndpointsLock as client-go shipped them
// before it removed them (resourcelock.New now refuses "configmaps" and "endpoints"), for
// the deployments still running such a client-go: the LeaderElectionRecord, marshalled with
// encoding/json, in the annotation resourcelock.LeaderElectionRecordAnnotationKey.
// Unlike the old code it also writes the record fields client-go added since (strategy,
// preferredHolder, both empty), as today's struct marshals.
type AnnotationLock struct {
	Kind       LockKind // LockConfigMap or LockEndpoints
	Meta       metav1.ObjectMeta
	Client     corev1client.CoreV1Interface
	LockConfig resourcelock.ResourceLockConfig
	cm         *corev1.ConfigMap
	ep         *corev1.Endpoints
}

var _ resourcelock.Interface = (*AnnotationLock)(nil)

// Get reads the record; an object without the annotation reads as the empty record.
func (l *AnnotationLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	var annotations map[string]string
	switch l.Kind {
	case LockConfigMap:
		cm, err := l.Client.ConfigMaps(l.Meta.Namespace).Get(ctx, l.Meta.Name, metav1.GetOptions{})
		if err != nil {
			return nil, nil, err
		}
		l.cm, annotations = cm, cm.Annotations
	default:
		ep, err := l.Client.Endpoints(l.Meta.Namespace).Get(ctx, l.Meta.Name, metav1.GetOptions{})
		if err != nil {
			return nil, nil, err
		}
		l.ep, annotations = ep, ep.Annotations
	}
	var record resourcelock.LeaderElectionRecord
	recordStr, found := annotations[resourcelock.LeaderElectionRecordAnnotationKey]
	if found {
		if err := json.Unmarshal([]byte(recordStr), &record); err != nil {
			return nil, nil, err
		}
	}
	return &record, []byte(recordStr), nil
}

// Create creates the object with the record.
func (l *AnnotationLock) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	b, err := json.Marshal(ler)
	if err != nil {
		return err
	}
	meta := metav1.ObjectMeta{Namespace: l.Meta.Namespace, Name: l.Meta.Name,
		Annotations: map[string]string{resourcelock.LeaderElectionRecordAnnotationKey: string(b)}}
	switch l.Kind {
	case LockConfigMap:
		l.cm, err = l.Client.ConfigMaps(l.Meta.Namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta}, metav1.CreateOptions{})
	default:
		l.ep, err = l.Client.Endpoints(l.Meta.Namespace).Create(ctx, &corev1.Endpoints{ObjectMeta: meta}, metav1.CreateOptions{})
	}
	return err
}

// Update writes the record into the object last read or created.
func (l *AnnotationLock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	b, err := json.Marshal(ler)
	if err != nil {
		return err
	}
	switch {
	case l.Kind == LockConfigMap && l.cm != nil:
		cm := l.cm.DeepCopy()
		setAnnotation(&cm.ObjectMeta, string(b))
		l.cm, err = l.Client.ConfigMaps(l.Meta.Namespace).Update(ctx, cm, metav1.UpdateOptions{})
	case l.Kind == LockEndpoints && l.ep != nil:
		ep := l.ep.DeepCopy()
		setAnnotation(&ep.ObjectMeta, string(b))
		l.ep, err = l.Client.Endpoints(l.Meta.Namespace).Update(ctx, ep, metav1.UpdateOptions{})
	default:
		return errors.New("lock not initialized, call Get or Create first")
	}
	return err
}

func setAnnotation(m *metav1.ObjectMeta, record string) {
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[resourcelock.LeaderElectionRecordAnnotationKey] = record
}

// RecordEvent records nothing: the candidates have no event recorder.
func (l *AnnotationLock) RecordEvent(string) {}

// Identity is the candidate's identity.
func (l *AnnotationLock) Identity() string { return l.LockConfig.Identity }

// Describe names the lock as client-go did.
func (l *AnnotationLock) Describe() string {
	return fmt.Sprintf("%v/%v", l.Meta.Namespace, l.Meta.Name)
}
