"""The loss landscape of one layer (issue 22): ED degrees, and every critical point of a squared loss.

* :mod:`.metrics`: the forms the distance is measured with (Euclidean, generic, a data set's Gram form): one
  table, :data:`~.metrics.METRICS`, that every route reads;
* :mod:`.system`: the critical equations in the weights, the critical locus of the parametrization removed;
* :mod:`.ed`: :func:`ed_degree` by counting (msolve) or on the implicit side (Macaulay2, :mod:`.ed_implicit`), its
  result :class:`EDDegree` in :mod:`.ed_result`;
* :mod:`.critical`: :func:`critical_points` of a given data set, classified, the real ones isolated;
* :mod:`.ideal_ed`: :func:`ideal_ed_degree`, the ED degree of any variety given by its ideal, for a given metric;
* :mod:`.model`, :mod:`.model_system`, :mod:`.models` and :mod:`.model_critical`: any polynomial model
  (:class:`PolynomialModel`: a layer, a deep linear or linear convolutional network, or anyone's polynomials), its
  ED degree (:func:`model_ed_degree`) and the critical points of a loss on it (:func:`model_critical_points`);
* :mod:`.square` and :mod:`.numerical`: the square system of the numerical route and its problems (monodromy,
  parameter homotopies, certification: the numerical room, :mod:`ag_attention._numeric`).
"""

from .boundary import BoundaryED, boundary_ed_degree
from .critical import CRITICAL_METHODS, CriticalFamily, CriticalPoint, CriticalPoints, Nearest, Route, critical_points
from .ed import ED_METHODS, EDCount, EDDegree, ed_degree
from .estimate import landscape_estimate
from .formula import segre_product_ed_degree
from .ideal_ed import IdealEDDegree, ideal_ed_degree
from .metrics import METRICS, gram
from .model import PolynomialModel, polynomial_model
from .models import ModelCriticalPoint, ModelCriticalPoints, ModelEDDegree, model_critical_points, model_ed_degree

__all__ = [
    "EDDegree",
    "EDCount",
    "ed_degree",
    "CriticalPoints",
    "CriticalPoint",
    "CriticalFamily",
    "Nearest",
    "Route",
    "critical_points",
    "boundary_ed_degree",
    "BoundaryED",
    "ideal_ed_degree",
    "IdealEDDegree",
    "PolynomialModel",
    "polynomial_model",
    "ModelEDDegree",
    "ModelCriticalPoint",
    "ModelCriticalPoints",
    "model_ed_degree",
    "model_critical_points",
    "CRITICAL_METHODS",
    "ED_METHODS",
    "METRICS",
    "gram",
    "landscape_estimate",
    "segre_product_ed_degree",
]
