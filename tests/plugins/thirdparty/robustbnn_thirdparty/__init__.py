"""A third-party robustbnn plug-in package, installed through its entry points (tests only).

One module per plug-in kind, one entry point each (``entry_points.txt`` of the dist-info
beside this folder); importing a module registers its plug-in, so nothing is imported here:

=====================  =======================  ===================================
group                  name                     module
=====================  =======================  ===================================
``robustbnn.models``   ``tp_rank1``             :mod:`robustbnn_thirdparty.rank1`
``robustbnn.attacks``  ``tp_bim``               :mod:`robustbnn_thirdparty.bim`
``robustbnn.ood_sets`` ``tp_stripes``           :mod:`robustbnn_thirdparty.stripes`
``robustbnn.measures`` ``tp_margin``            :mod:`robustbnn_thirdparty.margin`
``robustbnn.suites``   ``tp_smoke``             :mod:`robustbnn_thirdparty.suite`
=====================  =======================  ===================================
"""
