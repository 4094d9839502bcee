package faults

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// Filter injects the live rules' faults into the resource requests that
// reach next. It sits behind kube's authentication, authorization and
// request-info filters, so a rule sees who asks and what for, and a
// refused request is not faulted. Statuses are written as kube writes
// them, in the encoding the client negotiated (codecs).
func (i *Injector) Filter(next http.Handler, codecs runtime.NegotiatedSerializer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, ok := request.RequestInfoFrom(r.Context())
		if !ok || !info.IsResourceRequest {
			next.ServeHTTP(w, r)
			return
		}
		isWatch := info.Verb == "watch"
		if !isWatch && i.active.Load() == 0 {
			next.ServeHTTP(w, r)
			return
		}
		q := attrs{
			verb: info.Verb, group: info.APIGroup, resource: info.Resource, subresource: info.Subresource,
			namespace: info.Namespace, name: info.Name,
			userAgent: r.UserAgent(), fieldManager: r.URL.Query().Get("fieldManager"),
		}
		if u, ok := request.UserFrom(r.Context()); ok {
			q.user = u.GetName()
		}
		f := i.forRequest(&q)
		if f.latency > 0 {
			t := time.NewTimer(f.latency)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		if f.err != nil {
			writeError(w, r, codecs, info, f.err)
			return
		}
		if isWatch {
			watch, done := i.openWatch(q)
			defer done()
			r = r.WithContext(context.WithValue(r.Context(), watchKey{}, watch))
		}
		next.ServeHTTP(w, r)
	})
}

// writeError answers with e as kube would for the request in info.
func writeError(w http.ResponseWriter, r *http.Request, codecs runtime.NegotiatedSerializer, info *request.RequestInfo, e *Error) {
	gr := schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}
	retry := e.RetryAfterSeconds
	if retry == 0 && (e.Code == http.StatusTooManyRequests || e.Code == http.StatusServiceUnavailable) {
		retry = 1
	}
	var err *apierrors.StatusError
	switch {
	case e.Message != "" || e.Reason != "":
		err = &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: e.Code, Reason: e.Reason, Message: e.Message,
		}}
		if retry > 0 {
			err.ErrStatus.Details = &metav1.StatusDetails{RetryAfterSeconds: retry}
		}
	case e.Code == http.StatusConflict:
		err = apierrors.NewConflict(gr, info.Name, errors.New(OptimisticLockMessage))
	case e.Code == http.StatusTooManyRequests:
		err = apierrors.NewTooManyRequests("Too many requests, please try again later.", int(retry))
	case e.Code == http.StatusInternalServerError:
		err = apierrors.NewInternalError(errors.New("etcdserver: request timed out"))
	case e.Code == http.StatusServiceUnavailable:
		err = apierrors.NewServiceUnavailable("the server is currently unable to handle the request")
		err.ErrStatus.Details = &metav1.StatusDetails{RetryAfterSeconds: retry}
	case e.Code == http.StatusGatewayTimeout:
		err = apierrors.NewTimeoutError("request did not complete within requested timeout - context deadline exceeded", 0)
	default:
		err = &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: e.Code, Reason: metav1.StatusReasonUnknown,
			Message: http.StatusText(int(e.Code)),
		}}
	}
	if retry > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(retry)))
	}
	gv := schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}
	responsewriters.ErrorNegotiated(err, codecs, gv, w, r)
}

// OptimisticLockMessage is kube's text for a write that lost an
// optimistic-concurrency race.
const OptimisticLockMessage = "the object has been modified; please apply your changes to the latest version and try again"
