% Relations of an irbgen phantom world, written as plain Prolog rules.
% Base facts (asserted by the test): parent(Child, Parent), gender(Person, "female"|"male"),
% friend_(A, B) for each friendship once, dob/2, job/2, hobby/2.
% Reading: rel(X, Y) means "Y is the rel of X".

:- dynamic parent/2, gender/2, friend_/2, dob/2, job/2, hobby/2.

female(X) :- gender(X, "female").
male(X) :- gender(X, "male").

friend(X, Y) :- friend_(X, Y).
friend(X, Y) :- friend_(Y, X).

child(X, Y) :- parent(Y, X).
sibling(X, Y) :- parent(X, P), parent(Y, P), X \= Y.
married(X, Y) :- parent(C, X), parent(C, Y), X \= Y.

mother(X, Y) :- parent(X, Y), female(Y).
father(X, Y) :- parent(X, Y), male(Y).
son(X, Y) :- child(X, Y), male(Y).
daughter(X, Y) :- child(X, Y), female(Y).
sister(X, Y) :- sibling(X, Y), female(Y).
brother(X, Y) :- sibling(X, Y), male(Y).
wife(X, Y) :- married(X, Y), female(Y).
husband(X, Y) :- married(X, Y), male(Y).

grandparent(X, Y) :- parent(X, P), parent(P, Y).
grandmother(X, Y) :- grandparent(X, Y), female(Y).
grandfather(X, Y) :- grandparent(X, Y), male(Y).
grandchild(X, Y) :- grandparent(Y, X).
granddaughter(X, Y) :- grandchild(X, Y), female(Y).
grandson(X, Y) :- grandchild(X, Y), male(Y).

great_grandparent(X, Y) :- grandparent(X, G), parent(G, Y).
great_grandmother(X, Y) :- great_grandparent(X, Y), female(Y).
great_grandfather(X, Y) :- great_grandparent(X, Y), male(Y).
great_grandchild(X, Y) :- great_grandparent(Y, X).
great_granddaughter(X, Y) :- great_grandchild(X, Y), female(Y).
great_grandson(X, Y) :- great_grandchild(X, Y), male(Y).

aunt(X, Y) :- parent(X, P), sister(P, Y).
uncle(X, Y) :- parent(X, P), brother(P, Y).
niece(X, Y) :- sibling(X, S), daughter(S, Y).
nephew(X, Y) :- sibling(X, S), son(S, Y).
great_aunt(X, Y) :- grandparent(X, G), sister(G, Y).
great_uncle(X, Y) :- grandparent(X, G), brother(G, Y).
second_aunt(X, Y) :- great_grandparent(X, G), sister(G, Y).
second_uncle(X, Y) :- great_grandparent(X, G), brother(G, Y).

cousin(X, Y) :- parent(X, P), parent(Y, Q), sibling(P, Q), X \= Y.
female_cousin(X, Y) :- cousin(X, Y), female(Y).
male_cousin(X, Y) :- cousin(X, Y), male(Y).
female_second_cousin(X, Y) :- parent(X, P), parent(Y, Q), cousin(P, Q), female(Y), X \= Y.
male_second_cousin(X, Y) :- parent(X, P), parent(Y, Q), cousin(P, Q), male(Y), X \= Y.
female_first_cousin_once_removed(X, Y) :- cousin(X, C), daughter(C, Y), X \= Y.
male_first_cousin_once_removed(X, Y) :- cousin(X, C), son(C, Y), X \= Y.

mother_in_law(X, Y) :- married(X, S), mother(S, Y).
father_in_law(X, Y) :- married(X, S), father(S, Y).
sister_in_law(X, Y) :- married(X, S), sister(S, Y).
brother_in_law(X, Y) :- married(X, S), brother(S, Y).
son_in_law(X, Y) :- child(X, C), husband(C, Y).
daughter_in_law(X, Y) :- child(X, C), wife(C, Y).
